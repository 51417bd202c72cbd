// After a relaxed-SIMD build links (CMake POST_BUILD): web/attnkit.js runs the relaxed .wasm under
// the SIMD build's glue (the package ships one glue for both), which is right only while em++
// makes the same glue for both: the same objects but the kernels, the same flags, the same
// binaryen. Fails the build when the glues (and the threaded builds' worker scripts) differ in
// anything but the names of their files (never used: web/attnkit.js hands over the module, and
// web/src/runtime/threads.js names the worker script).
// node scripts/check_relaxed_glue.mjs DIST BASE RELAXED
import fs from 'node:fs';
import path from 'node:path';

const [dist, base, relaxed] = process.argv.slice(2);
const read = (name, ext) => {
  const file = path.join(dist, `${name}${ext}`);
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split(`${name}.`).join('BUILD.') : null;
};
for (const ext of ['.mjs', '.worker.js']) {
  const [a, b] = [read(base, ext), read(relaxed, ext)];
  if (a === b) continue;
  let i = 0;
  while (a && b && a[i] === b[i]) i++;
  console.error(`check_relaxed_glue: ${relaxed}${ext} differs from ${base}${ext}` +
    (a && b ? ` at character ${i}: ...${a.slice(i, i + 80)}... vs ...${b.slice(i, i + 80)}...` : ' (one is missing)') +
    `; web/attnkit.js runs ${relaxed}.wasm with ${base}'s glue, so both must be linked alike (CMakeLists.txt)`);
  process.exit(1);
}
