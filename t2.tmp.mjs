import Database from 'better-sqlite3'
const db = new Database('data/bench/search-1000000/cairn.db')
db.exec(`INSERT INTO knowledge_passages_pairs (knowledge_passages_pairs) VALUES ('delete-all'); UPDATE knowledge_pairs_state SET indexed_through = 0`)
db.pragma('wal_checkpoint(TRUNCATE)')
console.log(db.prepare('SELECT count(*) FROM knowledge_passages_pairs_data').pluck().get())
db.close()
