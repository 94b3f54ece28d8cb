/**
 * @module The zod schema of every JSON request body, by operation: the very objects validation
 * parses with (src/validate*.ts), gathered so the OpenAPI document (api/openapi/) shows them.
 */
import { checkpointSchema, CHECKPOINT_REFERENCE, restoreSchema } from './validate-continuity.js';
import {
  keyCreateSchema,
  memoryCreateSchema,
  memoryUpdateSchema,
  sessionCreateSchema,
  storeCreateSchema,
  storeUpdateSchema,
  workspaceCreateSchema,
} from './validate.js';

export const REQUEST_BODY_SCHEMAS = {
  storeCreate: storeCreateSchema,
  storeUpdate: storeUpdateSchema,
  memoryCreate: memoryCreateSchema,
  memoryUpdate: memoryUpdateSchema,
  sessionCreate: sessionCreateSchema,
  keyCreate: keyCreateSchema,
  workspaceCreate: workspaceCreateSchema,
  // Validation checks each reference on its own (so an error names its index); the shape is this.
  checkpointCreate: checkpointSchema,
  checkpointReference: CHECKPOINT_REFERENCE,
  restore: restoreSchema,
} as const;
