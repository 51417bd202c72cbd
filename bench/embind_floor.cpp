// The start-up floor of the design for `npm run bench -- load`: a wasm module with a single embind
// function, built with the same link flags as attnkit and loaded the same way (a package with
// "exports", a minified glue, synchronous compile and instantiate in Node). Whatever attnkit
// contains costs start-up on top of what this costs.
#include <emscripten/bind.h>

namespace {
int add_one(int x) { return x + 1; }
}  // namespace

EMSCRIPTEN_BINDINGS(embind_floor) { emscripten::function("_addOne", &add_one); }
