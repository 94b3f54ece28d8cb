/** @module How both engines key a path in `path_number_floors`: its SHA-256, so the path itself is not kept. */
import { sha256Hex } from '../../domain/content.js';

export const pathHash = (path: string): string => sha256Hex(path);
