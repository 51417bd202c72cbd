// Literal strings found in a text without a RegExp built of them: one literal (Replace, Split on a
// string), or many at once (the added tokens).

// Every occurrence of a literal string, left to right, as matchAll would give them.
export function* literalMatches(text, literal) {
  for (let i = text.indexOf(literal); i >= 0; i = text.indexOf(literal, i + literal.length)) {
    yield Object.assign([literal], { index: i });
  }
}

/**
 * Finds literal strings in a text as the regular expression of their alternation, longest first,
 * would (leftmost; at one place the longest; the next search from the end of the last match), in
 * time linear in the text times the longest literal's length, and with no RegExp built of them
 * (V8 refuses one past about 64 Ki characters; an added token may be that long). A one-unit
 * character class of the literals' first UTF-16 units skips to the places worth a trie walk.
 */
export class LiteralMatcher {
  constructor(literals) {
    this._root = new Map(); // UTF-16 unit -> node {next: Map, end: bool}
    const firsts = new Set();
    for (const lit of literals) {
      if (lit === '') continue;
      let node = { next: this._root };
      for (let i = 0; i < lit.length; i++) {
        const u = lit.charCodeAt(i);
        if (!node.next.has(u)) node.next.set(u, { next: new Map(), end: false });
        node = node.next.get(u);
      }
      node.end = true;
      firsts.add(lit.charCodeAt(0));
    }
    const unit = (u) => `\\u${u.toString(16).padStart(4, '0')}`;
    this._first = firsts.size ? new RegExp(`[${Array.from(firsts, unit).join('')}]`, 'g') : null;
  }

  /** [{0: match, index}] in order, as String.matchAll gives them. */
  *matches(text) {
    if (!this._first) return;
    const first = new RegExp(this._first); // its own lastIndex: a caller may interleave two scans
    for (let from = 0; ;) {
      first.lastIndex = from;
      if (!first.exec(text)) return;
      const at = first.lastIndex - 1;
      let next = this._root, end = -1;
      for (let j = at; j < text.length; j++) {
        const node = next.get(text.charCodeAt(j));
        if (!node) break;
        if (node.end) end = j + 1;
        next = node.next;
      }
      if (end < 0) {
        from = at + 1;
        continue;
      }
      yield Object.assign([text.slice(at, end)], { index: at });
      from = end;
    }
  }
}
