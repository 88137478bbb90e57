import { runSuite } from '../suite.js'

await runSuite(import.meta.url)
