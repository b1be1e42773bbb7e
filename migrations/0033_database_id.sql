-- A random id for the database, written once: GET /api/v1/health shows it and `gatewayd chain status`
-- compares it with the database it reads, so it can tell whether the server it asks uses that same
-- database. Random rather than derived from the network claim, so two databases prepared in the same
-- millisecond for the same network still differ, and the id says nothing of when a database was made.
-- The claim's insert writes it for a database claimed after this migration; a database claimed
-- before gets its id here. A copy of the database (a backup restored, `gatewayd db copy`) keeps it.
-- Frozen once released: change the schema in a new numbered file.
ALTER TABLE instance_network ADD COLUMN database_id TEXT;
UPDATE instance_network SET database_id = lower(hex(randomblob(8))) WHERE database_id IS NULL;
