import Database from 'better-sqlite3'
import fs from 'node:fs'
const db = new Database('data/bench/search-1000000/cairn.db')
db.exec(`DROP TRIGGER knowledge_passages_pairs_delete; DROP TABLE knowledge_passages_pairs; DROP TABLE knowledge_pairs_state;`)
for (const stmt of fs.readFileSync('schema/migrations/0019_knowledge_pairs.sql', 'utf8').split('--> statement-breakpoint')) db.exec(stmt)
db.pragma('wal_checkpoint(TRUNCATE)')
console.log(db.prepare('SELECT * FROM knowledge_pairs_state').get())
db.close()
