/** What `gatewayd backup` takes and how it fails, shared by the SQLite copy (backup.ts) and pg_dump (backup-postgres.ts). */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

export interface BackupOptions {
  file: string;
  force: boolean;
  /** Where progress goes; a carriage-return progress line is drawn only when it is a terminal. */
  progress?: NodeJS.WriteStream;
}
