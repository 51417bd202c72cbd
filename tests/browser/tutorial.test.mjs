// The tutorial page (web/index.html) in headless Chromium: every section is walked, every plot must
// have pixels, changing a control must change the numbers, each section is written to
// test-results/ as a screenshot, and a real checkpoint picked through the file input must give
// PyTorch's embeddings and layer-0 attention weights.
import test from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import zlib from 'node:zlib';
import path from 'node:path';
import { openTutorial, canvasStats, ARTIFACTS } from './browser.mjs';
import { fixture, maxAbsDiff, ROOT } from '../node/helpers.mjs';

const SECTIONS = ['weights', 'tokens', 'lookup', 'positions', 'sum', 'masks', 'attention', 'heads', 'next', 'generate', 'speed'];
const positional = fixture('positional.json');
const golden = (layout) => positional.cases.find((c) => c.length === 100 && c.dim === 128 && c.layout === layout);

/** Runs `act` and waits until the page has redrawn `kind` ('pipeline', 'positions', 'speed'). */
async function redraw(page, kind, act) {
  const before = await page.evaluate((k) => window.tutorial.draws[k], kind);
  await act();
  await page.waitForFunction(([k, n]) => window.tutorial.draws[k] > n, [kind, before]);
}
const results = (page) => page.evaluate(() => window.tutorial.results);
const canvasHash = async (page, id) => (await canvasStats(page, id)).hash;

/** Every visible canvas of a section has ink in several colours; then a screenshot of it. */
async function checkSection(page, id, name = id) {
  const canvases = await page.$$eval(`#${id} canvas`, (cs) => cs.filter((c) => c.offsetParent !== null).map((c) => c.id));
  for (const c of canvases) {
    const s = await canvasStats(page, c);
    assert.ok(s.inked > s.pixels / 50, `${c}: only ${s.inked} of ${s.pixels} pixels drawn`);
    assert.ok(s.colours > 3, `${c}: only ${s.colours} colours`);
    assert.ok((await page.getAttribute(`#${c}`, 'aria-label'))?.length > 10, `${c} has no aria-label`);
  }
  await page.locator(`#${id}`).screenshot({ path: path.join(ARTIFACTS, `tutorial-${name}.png`) });
  return canvases.length;
}

test('the tutorial walks from a sentence to each head\'s attention in headless Chromium', async (t) => {
  const { page, problems, close } = await openTutorial();
  t.after(close);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  assert.match(await page.textContent('#backend'), /^wasm-simd128(-relaxed)?-threads, \d+ threads$/); // npm start isolates the page
  await checkSection(page, 'weights');
  // This walk uses the toy model, whose switches are all free (the trained default has its own test).
  await redraw(page, 'pipeline', () => page.selectOption('#model-choice', 'toy'));
  assert.match(await page.textContent('#ckpt-status'), /toy model/);

  // 1. Tokens: BERT's ids for a typed sentence, a second segment, padding.
  const firstDrawn = await Promise.all(['lookup-rows', 'emb-sum', 'att-weights'].map((id) => canvasHash(page, id)));
  await redraw(page, 'pipeline', async () => {
    await page.fill('#text', 'Transformers read tokens.');
    await page.fill('#pair', 'Then attend.');
  });
  let r = await results(page);
  assert.deepEqual(r.tokens.tokens.slice(0, 5), ['[CLS]', 'transformers', 'read', 'token', '##s']);
  assert.equal(r.tokens.ids[0], 101);
  assert.equal(r.tokens.ids.length, 20); // padded to 20 by default
  assert.deepEqual(Array.from(r.tokens.typeIds.slice(0, 9)), [0, 0, 0, 0, 0, 0, 0, 1, 1]);
  const real = r.tokens.attentionMask.reduce((a, b) => a + b, 0);
  assert.equal(real, 11);
  assert.deepEqual(Array.from(r.tokens.ids.slice(real)), Array(20 - real).fill(0));
  assert.match(await page.textContent('#token-table'), /\[CLS\].*transformers.*##s/s);
  // The plots downstream were redrawn with the new sentence.
  const redrawn = await Promise.all(['lookup-rows', 'emb-sum', 'att-weights'].map((id) => canvasHash(page, id)));
  for (let i = 0; i < 3; i++) assert.notEqual(redrawn[i], firstDrawn[i]);
  await checkSection(page, 'tokens');
  await redraw(page, 'pipeline', () => page.selectOption('#tokenizer', 'gpt2'));
  r = await results(page);
  assert.deepEqual(r.tokens.tokens.slice(0, 3), ['Transform', 'ers', 'Ġread']);
  assert.deepEqual(Array.from(r.tokens.ids.slice(0, 3)), [41762, 364, 1100]);
  await redraw(page, 'pipeline', () => page.selectOption('#tokenizer', 'bert'));

  // 2. One-hot × table equals the lookup; the sqrt(d) box changes the rows by sqrt(32).
  r = await results(page);
  assert.equal(r.lookup.matmulDiff, 0);
  assert.equal(r.lookup.ones, 20);
  assert.deepEqual(Array.from(r.lookup.hot), Array.from(r.tokens.ids));
  const rowsBefore = await canvasHash(page, 'lookup-rows');
  await redraw(page, 'pipeline', () => page.uncheck('#scale'));
  const unscaled = await results(page);
  assert.ok(Math.abs(r.lookup.rmsScaled / unscaled.lookup.rmsScaled - Math.sqrt(32)) < 1e-4);
  assert.notEqual(await canvasHash(page, 'lookup-rows'), rowsBefore); // the colour bar's labels
  await redraw(page, 'pipeline', () => page.check('#scale'));
  await checkSection(page, 'lookup');

  // 3. PyTorch's sinusoidal table in both layouts, the shift map, and attnkit's own error message.
  let pe = await page.evaluate(() => window.tutorial.positions);
  assert.ok(maxAbsDiff(pe.table, golden('interleaved').data) < 2e-6 + 100 * 1.2e-7);
  assert.ok(pe.shift.diff < 1e-5, `T(k) PE(p) is off by ${pe.shift.diff}`);
  const [d0, d1] = pe.dots;
  assert.ok(maxAbsDiff(d0.values.slice(0, 50), d1.values.slice(0, 50)) < 1e-3, 'PE(p)·PE(p+k) depends on p');
  await redraw(page, 'positions', () => page.selectOption('#pe-layout', 'split'));
  pe = await page.evaluate(() => window.tutorial.positions);
  assert.ok(maxAbsDiff(pe.table, golden('split').data) < 2e-6 + 100 * 1.2e-7);
  await redraw(page, 'positions', () => page.fill('#pe-k', '40'));
  pe = await page.evaluate(() => window.tutorial.positions);
  assert.equal(pe.params.k, 40);
  assert.ok(pe.shift.diff < 1e-5);
  await page.fill('#pe-dim', '7');
  await page.waitForFunction(() => document.getElementById('pe-status').classList.contains('error'));
  assert.match(await page.textContent('#pe-status'), /dim must be even.*got 7/);
  await redraw(page, 'positions', () => page.fill('#pe-dim', '64'));
  assert.deepEqual(await page.evaluate(() => window.tutorial.positions.dims), [100, 64]);
  await checkSection(page, 'positions');

  // 4. The summed rows and LayerNorm equal attnkit's fused Embeddings module.
  r = await results(page);
  assert.ok(r.embed.check.diff < 1e-5);
  assert.ok(Math.max(...r.embed.after.mean.map(Math.abs)) < 1e-5);
  await redraw(page, 'pipeline', () => page.selectOption('#emb-positional', 'learned'));
  const learned = await results(page);
  assert.ok(maxAbsDiff(learned.embed.position, r.embed.position) > 0.1);
  assert.ok(learned.embed.check.diff < 1e-5);
  await checkSection(page, 'sum');

  // 5. Masks follow the padding: left padding with the causal mask leaves rows that see nothing.
  await redraw(page, 'pipeline', () => page.selectOption('#mask-pad-side', 'left'));
  await redraw(page, 'pipeline', () => page.check('#att-causal'));
  r = await results(page);
  assert.deepEqual(Array.from(r.tokens.attentionMask.slice(0, 9)), Array(9).fill(0));
  assert.deepEqual(r.masks.fullyMasked, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.match(await page.textContent('#mask-facts'), /Rows 0, 1, .* fully masked/);
  const L = 20;
  for (const i of r.masks.fullyMasked) {
    assert.deepEqual(Array.from(r.attention.weights.slice(i * L, (i + 1) * L)), Array(L).fill(0));
  }
  await checkSection(page, 'masks');

  // 6. Each positional scheme, causal or not: the hand-made steps agree with the fused kernels,
  // rows are distributions, the future and the padding get no weight.
  for (const scheme of ['sinusoidal', 'learned', 'rope', 'alibi']) {
    for (const causal of [true, false]) {
      await redraw(page, 'pipeline', async () => {
        await page.selectOption('#att-positional', scheme);
        await page.setChecked('#att-causal', causal);
      });
      const a = (await results(page)).attention;
      assert.equal(a.positional, scheme);
      assert.equal(a.causal, causal);
      assert.ok(a.softmaxDiff < 1e-5, `${scheme}: softmax differs by ${a.softmaxDiff}`);
      assert.ok(a.check.diff < 1e-5, `${scheme}: the layer differs from MultiHeadAttention by ${a.check.diff}`);
      for (let h = 0; h < a.H; h++) {
        for (let i = 0; i < L; i++) {
          const row = a.allWeights.slice((h * L + i) * L, (h * L + i + 1) * L);
          const sum = row.reduce((x, y) => x + y, 0);
          assert.ok(Number.isFinite(sum) && (Math.abs(sum - 1) < 1e-5 || (causal && i < 9 && sum === 0)), `head ${h} row ${i} sums to ${sum}`);
          for (let j = 0; j < 9; j++) assert.equal(row[j], 0, 'a padding key got weight');
          if (causal) for (let j = i + 1; j < L; j++) assert.equal(row[j], 0, 'a future key got weight');
        }
      }
      assert.equal(await page.isVisible('#att-bias'), scheme === 'alibi');
      if (scheme === 'rope') {
        // RoPE: the score depends on m − n only; added positions do not.
        const [s0, s1] = a.ropeDemo.series;
        assert.ok(maxAbsDiff(s0.rope, s1.rope) < 1e-3 * Math.max(...s0.rope.map(Math.abs)));
        assert.ok(maxAbsDiff(s0.added, s1.added) > 0.1);
      }
      if (scheme === 'alibi') assert.deepEqual(Array.from(a.slopes), [0.25, 0.0625, 0.015625, 0.00390625]);
    }
  }
  const head0 = (await results(page)).attention.weights;
  await redraw(page, 'pipeline', () => page.selectOption('#att-head', '2'));
  r = await results(page);
  assert.equal(r.attention.head, 2);
  assert.ok(maxAbsDiff(r.attention.weights, head0) > 1e-3);
  // Keyboard: a focused heatmap reads its cells out.
  await page.focus('#att-weights');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  assert.match(await page.textContent('#att-weights-readout'), /^query “.*” \(1\), key “.*” \(1\): /);
  assert.equal(await checkSection(page, 'attention'), 4 + 5 + 4 + 2);

  // 7. Speed, measured live in both builds.
  await page.selectOption('#speed-length', '64');
  await redraw(page, 'speed', () => page.click('#speed-run'));
  const speed = await page.evaluate(() => window.tutorial.speed);
  assert.deepEqual(speed.runs.map((x) => x.backend), ['wasm-simd128-threads', 'wasm-simd128', 'wasm-scalar']);
  assert.equal(speed.threadsUnavailableReason, null);
  for (const run of speed.runs) assert.ok(run.medianMs > 0 && run.firstMs > 0 && run.gflops > 0, JSON.stringify(run));
  assert.equal(await page.locator('#speed-table tbody tr').count(), 3);
  const said = await page.textContent('#speed-status');
  assert.match(said, /warmed up/);
  assert.doesNotMatch(said, /0\.\d+× (as )?fast/, 'a slowdown called a speed-up');
  await checkSection(page, 'speed');

  // The one error shown was the bad dimension typed on purpose.
  const errors = await page.evaluate(() => window.tutorial.errors);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /dim must be even/);
  assert.deepEqual(problems, []);
});

test('the tutorial fits a phone-sized viewport', async (t) => {
  const { page, problems, close } = await openTutorial({ width: 390, height: 844 });
  t.after(close);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.waitForFunction(() => window.tutorial.draws.scores > 0);
  await page.click('#gen-start');
  await page.waitForFunction(() => window.tutorial.draws.generation > 0);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the page scrolls sideways');
  for (const id of SECTIONS.slice(0, 10)) await checkSection(page, id, `phone-${id}`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'tutorial-phone.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

// A tokenizer.json whose ids line up with the fixture's input: word "w<i>" is id i, and the pair
// template is [CLS] A B [SEP] with B in segment 1.
function tinyTokenizerJson() {
  const vocab = { '[PAD]': 0, '[UNK]': 1, '[CLS]': 2, '[SEP]': 3, '[MASK]': 4 };
  for (let i = 5; i < 64; i++) vocab[`w${i}`] = i;
  const special = (id, content) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [special(0, '[PAD]'), special(1, '[UNK]'), special(2, '[CLS]'), special(3, '[SEP]'), special(4, '[MASK]')],
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
    },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

test('a checkpoint picked from disk drives the tutorial and gives PyTorch\'s layer-0 attention', async (t) => {
  const { page, problems, close } = await openTutorial();
  t.after(close);
  const bert = fixture('models.json').cases.find((c) => c.name === 'bert-tiny');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'attnkit-tutorial-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  const model = (name) => path.join(ROOT, 'tests/fixtures', bert.dir, name);

  // The fixture's first row: [CLS] w17 w33 w5 | w60 w41 [SEP], no padding.
  await redraw(page, 'pipeline', async () => {
    await page.fill('#pad-to', '0');
    await page.fill('#text', 'w17 w33 w5');
    await page.fill('#pair', 'w60 w41');
  });
  await redraw(page, 'pipeline', () => page.setInputFiles('#ckpt-files', [model('config.json'), model('model.safetensors'), path.join(dir, 'tokenizer.json')]));
  await page.waitForFunction(() => window.tutorial.results?.weights === 'checkpoint');
  const r = await results(page);
  const [, L] = bert.dims;
  assert.deepEqual(Array.from(r.tokens.ids), bert.inputIds.slice(0, L));
  assert.deepEqual(Array.from(r.tokens.typeIds), bert.tokenTypeIds.slice(0, L));
  assert.equal(await page.inputValue('#tokenizer'), 'loaded');
  assert.ok(await page.isDisabled('#att-positional'));
  assert.match(await page.textContent('#ckpt-status'), /Using a bert model: 2 layers, width 32, 4 heads/);
  assert.equal(await page.inputValue('#model-choice'), 'checkpoint');
  // PyTorch's embedding output (hidden state 0) and layer-0 attention weights for that row.
  const D = 32, H = 4;
  assert.ok(maxAbsDiff(r.embed.normed, bert.hiddenStates[0].slice(0, L * D)) < 1e-5, 'embeddings differ from PyTorch');
  assert.ok(maxAbsDiff(r.attention.allWeights, bert.attentions[0].slice(0, H * L * L)) < 1e-5, 'attention differs from PyTorch');
  assert.ok(r.attention.check.diff < 1e-5 && r.embed.check.diff < 1e-5);
  const pe = await page.evaluate(() => window.tutorial.positions);
  assert.equal(pe.learnedSource, 'bert');
  await page.locator('#attention').screenshot({ path: path.join(ARTIFACTS, 'tutorial-checkpoint-attention.png') });

  // GPT-2 without its tokenizer.json: the bundled GPT-2 vocabulary has ids beyond this tiny
  // model's 64, and the page says so instead of failing silently; going back restores the page.
  const gpt2 = (name) => path.join(ROOT, 'tests/fixtures/models/gpt2-tiny', name);
  await page.setInputFiles('#ckpt-files', [gpt2('config.json'), gpt2('model.safetensors')]);
  await page.waitForFunction(() => document.getElementById('status').classList.contains('error'));
  assert.match(await page.textContent('#status'), /ids.*64/);
  assert.match(await page.textContent('#ckpt-status'), /Using a gpt2 model/);
  // Nothing stale stays: the token table and the plots the failed request fed are empty.
  assert.equal(await page.locator('#token-table tbody tr').count(), 0);
  assert.equal((await canvasStats(page, 'att-weights')).inked, 0);
  assert.equal(await page.evaluate(() => window.tutorial.results), null);
  await redraw(page, 'pipeline', () => page.selectOption('#model-choice', 'toy'));
  assert.equal((await results(page)).weights, 'default');
  assert.ok(!(await page.isDisabled('#att-positional')));
  assert.deepEqual(problems, []);
});

/** Decodes a PNG's header and image data (zlib), checking it is a whole picture of its size. */
function decodePng(bytes) {
  assert.deepEqual([...bytes.subarray(0, 8)], [137, 80, 78, 71, 13, 10, 26, 10], 'not a PNG');
  let at = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (at < bytes.length) {
    const n = bytes.readUInt32BE(at), type = bytes.toString('latin1', at + 4, at + 8);
    const body = bytes.subarray(at + 8, at + 8 + n);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      assert.equal(body[8], 8, 'bit depth');
      channels = { 2: 3, 6: 4 }[body[9]];
    }
    if (type === 'IDAT') idat.push(body);
    at += 12 + n;
  }
  const pixels = zlib.inflateSync(Buffer.concat(idat));
  assert.equal(pixels.length, height * (1 + width * channels), 'the image data does not cover the picture');
  return { width, height };
}

test('the trained model is the default: every head, the scores the training script measured, the next word, generation with the cache', async (t) => {
  const { page, problems, requests, close } = await openTutorial();
  t.after(close);
  const metrics = JSON.parse(fs.readFileSync(path.join(ROOT, 'web/tutorial/model/metrics.json'), 'utf8'));
  assert.equal(await page.inputValue('#model-choice'), 'trained');
  const config = JSON.parse(fs.readFileSync(path.join(ROOT, 'web/tutorial/model/config.json'), 'utf8'));
  const layers = config.n_layer;
  assert.match(await page.textContent('#ckpt-status'), new RegExp(`trained GPT-2: ${layers} layers, width 128, 4 heads, vocabulary 4096`));
  let r = await results(page);
  assert.equal(r.weights, 'checkpoint');
  assert.equal(r.tokens.model, 'bpe');

  // 7. The model view: layers x 4 heads, drawn; a click takes one apart in section 6.
  assert.equal(await page.locator('#model-view canvas').count(), layers * 4);
  await checkSection(page, 'heads', 'trained-heads');
  await redraw(page, 'pipeline', () => page.click(`#mv-${layers - 1}-1`));
  r = await results(page);
  assert.equal(r.attention.layer, layers - 1);
  assert.equal(r.attention.head, 1);
  assert.equal(await page.inputValue('#att-layer'), String(layers - 1));
  assert.ok(r.attention.check.diff < 1e-5, `layer ${layers - 1} taken apart differs from the model by ${r.attention.check.diff}`);
  assert.ok(r.attention.softmaxDiff < 1e-5);
  await page.focus('#mv-0-3');
  await redraw(page, 'pipeline', () => page.keyboard.press('Enter'));
  assert.equal((await results(page)).attention.layer, 0);

  // The heads' scores, measured live by attnkit, are the training script's (PyTorch) within 1e-3.
  await page.waitForFunction(() => window.tutorial.draws.scores > 0);
  const scores = await page.evaluate(() => window.tutorial.scores);
  assert.ok(maxAbsDiff(scores.previousToken.flat(), metrics.previousToken.scores.flat()) < 1e-3);
  assert.ok(maxAbsDiff(scores.induction.flat(), metrics.induction.scores.flat()) < 1e-3);
  assert.match(await page.textContent('#scores-facts'), /Best previous-token head: layer \d, head \d, score 0\.\d+.*Best induction head: layer \d, head \d, score 0\.\d+/);
  // Both heads are there to be found (the page says "has not learned" below its thresholds).
  assert.doesNotMatch(await page.textContent('#scores-facts'), /has not learned/);

  // 8. The next word: temperature and top-k reshape the distribution; a bad value says what to fix
  // and leaves no stale bars.
  const next = () => page.evaluate(() => window.tutorial.next);
  const first = await next();
  assert.ok(first.kept === 4096 && first.top.length === 12);
  await redraw(page, 'next', () => page.fill('#next-temperature', '0.3'));
  const sharp = await next();
  assert.equal(sharp.top[0].id, first.top[0].id);
  assert.ok(sharp.top[0].probability > first.top[0].probability + 0.01, 'a lower temperature did not sharpen the distribution');
  await redraw(page, 'next', () => page.fill('#next-topk', '3'));
  assert.equal((await next()).kept, 3);
  await page.fill('#next-temperature', '0');
  await page.waitForFunction(() => document.getElementById('next-status').classList.contains('error'));
  assert.match(await page.textContent('#next-status'), /temperature must be above 0.*got 0/);
  assert.equal((await canvasStats(page, 'next-bars')).inked, 0);
  await redraw(page, 'next', () => page.fill('#next-temperature', '1'));
  await page.fill('#next-topk', '0');
  // The logit lens: layers + 1 rows of a token per position; its last row is the model's output.
  r = await results(page);
  assert.equal(r.lens.rows, layers + 1);
  assert.equal(r.lens.cols, r.tokens.ids.length);
  assert.ok(r.next.check < 1e-4, `the lens's last row differs from Model.forward by ${r.next.check}`);
  await checkSection(page, 'next', 'trained-next');

  // 9. Generation: the prompt fills the cache, each step adds one position and one token.
  await page.fill('#gen-prompt', 'And God said');
  await page.click('#gen-start');
  await page.waitForFunction(() => window.tutorial.draws.generation > 0);
  let g = await page.evaluate(() => window.tutorial.generation);
  const prompt = g.cacheLength;
  assert.ok(prompt >= 3);
  for (let step = 1; step <= 3; step++) {
    const before = await page.evaluate(() => window.tutorial.draws.generation);
    await page.click('#gen-step');
    await page.waitForFunction((n) => window.tutorial.draws.generation > n, before);
    g = await page.evaluate(() => window.tutorial.generation);
    assert.equal(g.cacheLength, prompt + step);
    // The newest query row reads every cached position: its weights sum to 1 over cacheLength keys.
    const a = g.last.attentions[0];
    assert.deepEqual(a.dims.slice(2), [1, prompt + step]);
    const row = Object.values(a.data).slice(0, prompt + step);
    assert.ok(Math.abs(row.reduce((x, y) => x + y, 0) - 1) < 1e-5);
  }
  // The other sections' forward passes (a new sentence) leave the generation's cache alone.
  await redraw(page, 'pipeline', () => page.fill('#text', 'In the beginning'));
  {
    const before = await page.evaluate(() => window.tutorial.draws.generation);
    await page.click('#gen-step');
    await page.waitForFunction((n) => window.tutorial.draws.generation > n, before);
    g = await page.evaluate(() => window.tutorial.generation);
  }
  assert.deepEqual(g.history, [prompt, prompt + 1, prompt + 2, prompt + 3, prompt + 4]);
  assert.ok((await page.textContent('#gen-text')).startsWith('And God said'));
  assert.ok((await page.textContent('#gen-text')).length > 'And God said'.length);
  await checkSection(page, 'generate', 'trained-generate');

  // Every plot saves as a PNG that decodes to the canvas's size.
  for (const id of ['lens', 'score-induction', 'gen-attention', 'head-view']) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click(`#${id}-png`)]);
    const png = decodePng(fs.readFileSync(await download.path()));
    const size = await page.evaluate((c) => [document.getElementById(c).width, document.getElementById(c).height], id);
    assert.deepEqual([png.width, png.height], size);
    assert.equal(download.suggestedFilename(), `attnkit-${id}.png`);
  }

  // A failed checkpoint load says what to fix and keeps the trained model (its plots stay valid).
  await page.setInputFiles('#ckpt-files', [path.join(ROOT, 'web/tutorial/model/config.json')]);
  await page.waitForFunction(() => document.getElementById('ckpt-status').classList.contains('error'));
  assert.match(await page.textContent('#ckpt-status'), /Could not load the checkpoint: .*model\.safetensors.*Still using the trained GPT-2/);
  assert.equal(await page.inputValue('#model-choice'), 'trained');
  assert.equal((await results(page)).weights, 'checkpoint');

  assert.deepEqual(problems, []);
  const off = requests.filter((u) => !/^(http:\/\/127\.0\.0\.1[:/]|blob:|data:)/.test(u));
  assert.deepEqual(off, [], 'requests off 127.0.0.1');
});
