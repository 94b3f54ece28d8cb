{
  "targets": [{
    "target_name": "fuse",
    "include_dirs": [
      "<!(node -p \"require('path').dirname(require.resolve('napi-macros/package.json'))\")",
    ],
    "cflags": ["<!@(pkg-config --cflags fuse3)", "-O2", "-Wall", "-Wno-unused-function", "-Wno-unused-variable"],
    "libraries": ["<!@(pkg-config --libs fuse3)"],
    "sources": ["fuse-native.c", "node-tree.c", "stat-cache.c"],
  }]
}
