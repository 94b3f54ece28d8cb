/**
 * Pins the error mapping of both faces: every ErrorCode has an HTTP status and envelope type
 * (api/errors.ts). A new code without a mapping fails here.
 */
import { describe, expect, it } from 'vitest';
import { HTTP_ERRORS, errorBody } from '../../api/errors.js';
import { ERROR_CODES, MnemoError, type ErrorCode } from '../../src/index.js';

const EXPECTED_HTTP: Record<ErrorCode, [number, string]> = {
  invalid_request: [400, 'invalid_request_error'],
  invalid_path: [400, 'invalid_request_error'],
  path_too_long: [400, 'invalid_request_error'],
  name_too_long: [400, 'invalid_request_error'],
  content_too_large: [400, 'invalid_request_error'],
  invalid_utf8: [400, 'invalid_request_error'],
  unauthenticated: [401, 'authentication_error'],
  forbidden: [403, 'permission_error'],
  read_only: [403, 'permission_error'],
  not_found: [404, 'not_found_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  path_conflict: [409, 'memory_path_conflict_error'],
  precondition_failed: [409, 'memory_precondition_failed_error'],
  conflict: [409, 'conflict_error'],
  idempotency_conflict: [409, 'idempotency_conflict'],
  archived: [409, 'conflict_error'],
  request_too_large: [413, 'request_too_large'],
  unsupported_encoding: [415, 'invalid_request_error'],
  request_timeout: [408, 'invalid_request_error'],
  budget_exceeded: [400, 'invalid_request_error'],
  limit_exceeded: [413, 'request_too_large'],
  overloaded: [503, 'overloaded_error'],
  unavailable: [503, 'api_error'],
  database_locked: [503, 'api_error'],
  mount_failed: [503, 'api_error'],
  storage_full: [507, 'api_error'],
  internal: [500, 'api_error'],
};

describe('error mapping', () => {
  it.each(ERROR_CODES.map((c) => [c]))('%s maps to its HTTP status and envelope type', (code) => {
    const [status, type] = EXPECTED_HTTP[code];
    expect(HTTP_ERRORS[code]).toEqual({ status, type });
  });

  it('a path conflict envelope carries conflicting_path and conflicting_memory_id', () => {
    const err = new MnemoError('path_conflict', 'taken', { conflicting_path: '/a', conflicting_memory_id: 'mem_x' });
    expect(errorBody(err, 'req_1')).toEqual({
      type: 'error',
      error: { type: 'memory_path_conflict_error', message: 'taken', conflicting_path: '/a', conflicting_memory_id: 'mem_x' },
      request_id: 'req_1',
    });
  });
});
