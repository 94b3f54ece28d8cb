/** @module The engine in the bench's own process (never a server's): a database file, an admin caller and one new store. */
import { createService, type Service } from '../../src/service/service.js';
import { openSqliteStorage, type SqliteOptions, type SqliteStorage } from '../../src/storage/sqlite/open.js';
import type { Caller } from '../../src/domain/types.js';

export interface BenchEngine {
  storage: SqliteStorage;
  service: Service;
  caller: Caller;
  storeId: string;
}

/** Opens the engine on `file` and creates a store named `name`, as an admin key named `keyName`. */
export async function openBenchEngine(file: string, keyName: string, name: string, description = '', options: SqliteOptions = {}): Promise<BenchEngine> {
  const storage = openSqliteStorage(file, options);
  try {
    const service = createService({ storage });
    const ws = await service.keys.defaultWorkspace();
    const { key } = await service.keys.createKey(keyName, 'admin', ws.id);
    const caller: Caller = { workspaceId: ws.id, actor: { type: 'api_actor', apiKeyId: key.id } };
    const storeId = (await service.createStore(caller, { name, description, metadata: {} })).id;
    return { storage, service, caller, storeId };
  } catch (err) {
    await storage.close();
    throw err;
  }
}
