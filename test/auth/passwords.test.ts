import t from 'tap'
import { dummyPasswordHash, hashPassword, lowerPasswordCostForTests, verifyPassword } from '../../src/auth/passwords.js'

// this file does not import test/helper.ts: its process starts at the production cost

t.test('hashes at the production cost by default, parameters in the hash', async (t) => {
  const stored = await hashPassword('correct horse battery')
  t.match(stored, /^scrypt\$16384\$8\$1\$[\w-]{22}\$[\w-]{86}$/)
  t.ok(await verifyPassword('correct horse battery', stored))
  t.notOk(await verifyPassword('correct horse batterY', stored))
  t.notOk(await verifyPassword('correct horse battery', 'bcrypt$x'))
  t.match(await dummyPasswordHash(), /^scrypt\$16384\$/)
})

t.test('the low test cost is refused outside a tap process', async (t) => {
  const tap = process.env.TAP
  delete process.env.TAP
  try {
    t.throws(() => lowerPasswordCostForTests(), /tap test processes only/)
  } finally {
    process.env.TAP = tap
  }
  t.match(await hashPassword('x'), /^scrypt\$16384\$/, 'still the production cost')
})

t.test('verification reads the cost from the stored hash, whatever the current cost', async (t) => {
  const strong = await hashPassword('correct horse battery')
  lowerPasswordCostForTests()
  const weak = await hashPassword('correct horse battery')
  t.match(weak, /^scrypt\$16\$1\$1\$/)
  t.ok(await verifyPassword('correct horse battery', weak))
  t.ok(await verifyPassword('correct horse battery', strong), 'a hash made at the production cost still verifies')
  t.notOk(await verifyPassword('wrong', strong))
  t.notOk(await verifyPassword('wrong', weak))
})
