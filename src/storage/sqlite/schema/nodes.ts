/**
 * @module Migration 12 (issue 14): the node a session is mounted on. Many servers may share one
 * database (PostgreSQL); each remounts only its own node's sessions on start. NULL: a session from
 * before node ids, served by whichever node serves the database (on SQLite, the one host).
 */
export const MIGRATION_12 = `ALTER TABLE sessions ADD COLUMN node_id TEXT;`;
