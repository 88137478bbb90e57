import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { openDatabase, projectRoot } from '../../src/db/index.js'
import type Database from 'better-sqlite3'
import { tempDir } from '../helper.js'

// migration 0027: each organization's passages by who may read them, kept by triggers in the statement that writes a
// document (words search's estimate of a reader's passages, src/knowledge/search.ts)
/**
 * A document's insert (`insert.run(id, organization, workspace, owner, scope, passages)`), the shares as kept
 * (`kept`) and as a sum over the documents would give them (`summed`)
 */
function sharesOf(sqlite: Database.Database) {
  const insert = sqlite.prepare(`INSERT INTO knowledge_documents (id, customer_id, workspace_id, owner_id, scope,
    file_name, file_type, file_size, sha256, category, tags, metadata, text_length, chunk_count, chunk_size,
    chunk_overlap, indexed_count, status, original_path, text_path, uploaded_at, updated_at)
    VALUES (?, ?, ?, ?, ?, 'a.txt', 'txt', 1, '', 'c', '[]', '{}', 1, ?, 1000, 0, 0, 'processing', NULL, '', 'a', 'a')`)
  const kept = () => sqlite.prepare(`SELECT customer_id, scope, workspace, owner, passages FROM knowledge_reader_shares
    ORDER BY 1, 2, 3, 4`).raw().all()
  const summed = () => sqlite.prepare(`SELECT customer_id, scope,
      CASE scope WHEN 'workspace' THEN coalesce(workspace_id, '') ELSE '' END AS workspace,
      CASE scope WHEN 'personal' THEN coalesce(owner_id, '') ELSE '' END AS owner, sum(chunk_count) AS passages
    FROM knowledge_documents GROUP BY 1, 2, 3, 4 HAVING sum(chunk_count) > 0 ORDER BY 1, 2, 3, 4`).raw().all()
  return { insert, kept, summed }
}

t.test('the readers\' shares follow every write of the documents, as a sum over them would', async (t) => {
  const handle = openDatabase(path.join(tempDir(t), 'cairn.db'), { checkpointer: false })
  t.teardown(() => handle.close())
  const { sqlite } = handle
  sqlite.pragma('foreign_keys = OFF')
  const { insert, kept, summed } = sharesOf(sqlite)
  const [orgA, orgB] = [randomUUID(), randomUUID()]
  const [ws1, ws2] = [randomUUID(), randomUUID()]
  const [alice, bob] = [randomUUID(), randomUUID()]
  const docs: string[] = []
  const add = (org: string, ws: string | null, owner: string, scope: string, chunks: number) => {
    const id = randomUUID()
    insert.run(id, org, ws, owner, scope, chunks)
    docs.push(id)
    return id
  }
  const a1 = add(orgA, ws1, alice, 'workspace', 10)
  add(orgA, ws1, bob, 'workspace', 5)
  const a3 = add(orgA, ws2, alice, 'workspace', 7)
  const p1 = add(orgA, ws1, alice, 'personal', 3)
  add(orgA, null, bob, 'personal', 4)
  const o1 = add(orgA, ws2, alice, 'organization', 20)
  add(orgB, null, alice, 'organization', 2)
  t.same(kept(), summed(), 'after inserts')
  t.equal(kept().length, 6, 'a row per organization, scope and workspace or owner')
  t.same(kept().find((r) => (r as unknown[])[1] === 'organization' && (r as unknown[])[0] === orgA),
    [orgA, 'organization', '', '', 20], 'an organization\'s documents under neither workspace nor owner')

  const update = (set: string, id: string, ...args: unknown[]) =>
    sqlite.prepare(`UPDATE knowledge_documents SET ${set} WHERE id = ?`).run(...args, id)
  update('chunk_count = ?', a1, 12)
  t.same(kept(), summed(), 'a document\'s passages counted again (its end: chunk_count = indexed_count)')
  update('scope = ?', p1, 'workspace')
  t.same(kept(), summed(), 'a personal document shared with its workspace')
  update('workspace_id = ?', a3, ws1)
  t.same(kept(), summed(), 'moved to another workspace')
  update('owner_id = ?', p1, bob)
  t.same(kept(), summed(), 'an owner changed')
  update('customer_id = ?', o1, orgB)
  t.same(kept(), summed(), 'to another organization')
  update('category = ?, status = ?', a1, 'd', 'indexed')
  t.same(kept(), summed(), 'other columns leave them')
  sqlite.prepare(`DELETE FROM knowledge_documents WHERE id = ?`).run(a3)
  t.same(kept(), summed(), 'a document deleted')
  sqlite.prepare(`DELETE FROM knowledge_documents WHERE customer_id = ?`).run(orgB)
  t.same(kept(), summed(), 'an organization\'s documents deleted')
  t.notOk(kept().some((r) => (r as unknown[])[0] === orgB), 'its rows are gone, not left at 0')
  sqlite.prepare(`DELETE FROM knowledge_documents`).run()
  t.same(kept(), [], 'none left')

  // the migration's own sum, for a database written before it
  add(orgA, ws1, alice, 'workspace', 10)
  add(orgA, ws1, bob, 'personal', 4)
  add(orgB, ws2, bob, 'organization', 6)
  const expected = summed()
  sqlite.prepare(`DELETE FROM knowledge_reader_shares`).run()
  const statements = fs.readFileSync(path.join(projectRoot(), 'schema', 'migrations',
    '0027_knowledge_reader_shares.sql'), 'utf8').split('--> statement-breakpoint')
  sqlite.exec(statements.find((s) => s.includes('INSERT INTO knowledge_reader_shares') && !s.includes('TRIGGER'))!)
  t.same(kept(), expected, 'the migration sums the documents already there')
})

t.test('the readers\' shares follow the cascades: a workspace, a user, an organization deleted', async (t) => {
  const handle = openDatabase(path.join(tempDir(t), 'cairn.db'), { checkpointer: false })
  t.teardown(() => handle.close())
  const { sqlite } = handle
  t.equal(sqlite.pragma('foreign_keys', { simple: true }), 1, 'foreign keys on, as the service runs')
  const now = new Date().toISOString()
  const [orgA, orgB] = [randomUUID(), randomUUID()]
  for (const org of [orgA, orgB]) sqlite.prepare(`INSERT INTO organizations (id, name, created_at) VALUES (?, 'o', ?)`)
    .run(org, now)
  const user = (org: string) => {
    const id = randomUUID()
    sqlite.prepare(`INSERT INTO users (id, customer_id, email, name, password_hash, org_role, created_at)
      VALUES (?, ?, ?, 'u', 'x', 'member', ?)`).run(id, org, `${id}@example.test`, now)
    return id
  }
  const workspace = (org: string, by: string) => {
    const id = randomUUID()
    sqlite.prepare(`INSERT INTO workspaces (id, customer_id, name, created_by, created_at) VALUES (?, ?, 'w', ?, ?)`)
      .run(id, org, by, now)
    return id
  }
  const [alice, bob, carol] = [user(orgA), user(orgA), user(orgB)]
  const [ws1, ws2, ws3] = [workspace(orgA, alice), workspace(orgA, bob), workspace(orgB, carol)]
  const { insert, kept, summed } = sharesOf(sqlite)
  const add = (org: string, ws: string | null, owner: string, scope: string, chunks: number) =>
    insert.run(randomUUID(), org, ws, owner, scope, chunks)
  add(orgA, ws1, alice, 'workspace', 10)
  add(orgA, ws1, bob, 'workspace', 5)
  add(orgA, ws2, bob, 'workspace', 7)
  add(orgA, ws2, alice, 'personal', 3)
  add(orgA, null, bob, 'organization', 20)
  add(orgB, ws3, carol, 'workspace', 2)
  t.same(kept(), summed(), 'to begin with')
  sqlite.prepare(`DELETE FROM workspaces WHERE id = ?`).run(ws1)
  t.same(kept(), summed(), 'a workspace deleted: its documents go with it')
  sqlite.prepare(`DELETE FROM users WHERE id = ?`).run(alice)
  t.same(kept(), summed(), 'a user deleted: their documents go')
  sqlite.prepare(`DELETE FROM organizations WHERE id = ?`).run(orgA)
  t.same(kept(), summed(), 'an organization deleted')
  t.notOk(kept().some((r) => (r as unknown[])[0] === orgA), 'none of its rows left')
  t.equal(kept().length, 1, 'the other organization\'s row stays')
})
