import t from 'tap'
import fs from 'node:fs'
import { openApiDocument, clientTypes, TYPES_FILE } from '../../scripts/client-types.js'

// the committed types of @cairn/client are what the service's OpenAPI document generates today
t.test('clients/typescript/src/generated/openapi.ts matches /api/docs/json', async (t) => {
  const fresh = await clientTypes(await openApiDocument())
  const committed = fs.readFileSync(TYPES_FILE, 'utf8')
  if (fresh !== committed) {
    const a = fresh.split('\n')
    const b = committed.split('\n')
    const line = a.findIndex((l, i) => l !== b[i])
    t.fail(`the generated client types drifted from the OpenAPI document (first difference at line ${line + 1}: ` +
      `${JSON.stringify(b[line])} → ${JSON.stringify(a[line])}); ` +
      'run `npm run clients:generate` and commit the result')
  } else {
    t.pass('no drift')
  }
  t.match(committed, /"\/api\/v2\/artifacts\/\{id\}\/status"/)
})
