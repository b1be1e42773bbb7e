/** Marks every /_dev/ answer, so a `gatewayd dev` client can tell a dev instance from any other server. */
export const DEV_HEADER = 'x-gatewayd-dev';
