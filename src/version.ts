/** The program version (kept equal to package.json; checked by a test). */
export const VERSION = '0.2.0';
/** The version of the OpenAPI contract. */
export const API_VERSION = '0.2.0';
