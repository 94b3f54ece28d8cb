/** @module The storage port's barrel: the roles live in port/, one file each (port/index.ts composes them). */
export type * from './port/index.js';
