// bench/bench.mjs's relaxed section in Node: run as
//   node --experimental-wasm-relaxed-simd --no-liftoff bench/relaxed_node.mjs
// (Node 20 runs relaxed SIMD behind the flag, and right only on its optimising tier); prints
// bench/relaxed_cases.mjs's results as one line of JSON.
import { load } from '../web/attnkit.js';
import { benchRelaxed } from './relaxed_cases.mjs';

const result = await benchRelaxed(load, { rounds: Number(process.argv[2] ?? 11) });
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
