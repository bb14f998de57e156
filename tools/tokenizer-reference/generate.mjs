// Expected ids and texts for the tokenizer tests, from Hugging Face's tokenizers (Rust) via its Node binding.
// Usage: node generate.mjs TOKENIZER_JSON[.gz] OUT_JSON
import { Tokenizer } from "tokenizers";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { createRequire } from "node:module";

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  console.error("usage: node generate.mjs TOKENIZER_JSON[.gz] OUT_JSON");
  process.exit(2);
}
const raw = input.endsWith(".gz") ? zlib.gunzipSync(fs.readFileSync(input)) : fs.readFileSync(input);
const json = JSON.parse(raw.toString("utf8"));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tokref-"));
const full = path.join(tmp, "tokenizer.json");
fs.writeFileSync(full, raw);
// The binding has no switch for encode_special_tokens; a copy whose special added tokens have contents that
// never occur encodes text the same way (special-token strings become plain text, non-special added tokens
// still match, ids stay where they are).
const plainJson = {
  ...json,
  added_tokens: json.added_tokens.map((t) => (t.special ? { ...t, content: `\u{f0000}unmatched-${t.id}` } : t)),
};
const plain = path.join(tmp, "tokenizer-split-special.json");
fs.writeFileSync(plain, JSON.stringify(plainJson));

const tok = Tokenizer.fromFile(full);
const tokSplit = Tokenizer.fromFile(plain);
const encode = async (t, text) => (await t.encode(text, null, { addSpecialTokens: false })).getIds();

const rep = (s, n) => s.repeat(n);
const texts = [
  // empty and white space
  "", " ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\n\n\n", " \n", "\n ", " \n \n ", "\r", "\r\n", "\r\n\r\n",
  "a\r\nb", " \t\n", "\t\n\t", "\u000b\u000c", "\u00a0", "a\u00a0b", "a \u00a0 b", "\u3000", "x\u3000\u3000y",
  "\u0085", "a\u2028b", "a\u2029b", "x\u202f\u205fy", "\u200b", "a\u200bb", "\ufeffBOM",
  // leading / trailing spaces
  " Hello", "Hello ", "  Hello  ", "Hello world", "   leading", "trailing   ", "trailing   \n", "a  b   c    d",
  "  \n  x", "x  \n\n  ", " x ", "\tindented\n\t\tmore",
  // contractions
  "I'm", "I'M", "you'll", "YOU'LL", "You'Ll", "it's", "IT'S", "'S", "'s", "'ll", "'LL", "'Ll", "we've", "WE'VE",
  "they're", "THEY'RE", "she'd", "SHE'D", "don't", "DON'T", "'x", "''", "'", "' s", "rock'n'roll", "O'Neil",
  "'\u017f", "'\u212a", "it’s", "l'été", "''s'", "'re'", "'\n",
  // digits and numbers
  "0", "12", "123456789", "3.14159", "1,000,000", "12345678901234567890", "-42", "1e-10", "0x1F", "v2.0.1",
  "\u0663\u0664\u0665", "\u2460\u2461", "\u216b", "\u00bd", "²³", "１２３",
  // punctuation runs
  "!!!", "...", "?!?!", "--->", "a...b", "(hello)", "[1, 2, 3]", "{\"a\": 1}", "!!!\n\n", " !!!", " !!! ",
  "@@@ ###", "...\n\n\nx", "«quoted»", "—dash—", "•bullet", "~~~", "$$$100", "a/b\\c", "<|>", "<<>>",
  // code
  "#include <stdio.h>\nint main(void) {\n    printf(\"hi\\n\");\n    return 0;\n}\n",
  "def f(x):\n    return x * 2\n\n\nprint(f(21))",
  "for (int i = 0; i < n; i++) {\n\tsum += a[i];\n}",
  "```python\nprint('hi')\n```", "x += y;\n", "if (a && b || !c) { return; }", "const s = `tmpl ${x}`;",
  "<div class=\"x\">Hi</div>", "SELECT * FROM t WHERE id=1;", "    \n    \n",
  // scripts
  "你好，世界！", "日本語のテキストです。", "한국어 텍스트", "مرحبا بالعالم", "नमस्ते दुनिया", "สวัสดีครับ ผมชื่อ",
  "Привет, мир!", "Γειά σου Κόσμε", "שלום עולם", "ქართული", "ᄀᄁ", "𝐀𝐁𝐂 math", "𠀀𠀁 ext-B",
  // emoji
  "👍", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "I ❤️ you", "😀😃😄", " 🎉", "🇩🇪🇫🇷", "#️⃣", "🧑🏿‍💻 coding",
  // combining marks and NFC
  "e\u0301", "\u00e9", "Cafe\u0301 au lait", "n\u0303o", "a\u0308\u0304", "\u0301", " \u0301x", "x\u0301\u0302\u0303",
  "\u212b", "A\u030a", "\u1100\u1161\u11a8", "\ufb01", "\u0915\u094d\u0937", "Zalgo: Z\u0351\u0363a\u0364\u0368l\u036ag\u0365o",
  "\u0300\u0300\u0300", "!\u0301", "1\u0301",
  // lone surrogates (a JavaScript string, like a Java one, can hold them)
  "a\ud800b", "\udc00", "x\ud83d", "\ude00\ud83d", "ok\ud83d\ude00ok",
  // special and added tokens in text
  "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", "a<|endoftext|>b", "<think>\nreasoning\n</think>\n\nanswer",
  "<|im_start|><|im_start|>", "<|im_end", "<|im_end|>|>", "<<|im_end|>", "<tool_call>\n{\"name\": \"f\"}\n</tool_call>",
  "text <|vision_start|><|image_pad|><|vision_end|> more", " <|im_end|> ", "<|IM_END|>", "<think></think>",
  // prose
  "The quick brown fox jumps over the lazy dog. It's 3:45pm — isn't it?\n\nNew paragraph: \"quotes\", (parens), and 'single'.",
  "Hugging Face's tokenizers: fast, accurate; 100% Rust!",
  // long words (10 kB and more)
  rep("a", 10000), rep("ab", 5000), rep(" ", 10000), rep(" ", 10000) + "x", rep("\n", 5000), rep("\t ", 5000),
  rep("supercalifragilistic", 500), rep("1234567890", 1000), rep("!", 10000), rep("日本", 2500),
  rep("é", 3000), rep("e\u0301", 3000), "x" + rep(" ", 9999) + "\n" + rep(" ", 100) + "y",
];

const cases = [];
for (const text of texts) {
  const ids = await encode(tok, text);
  const c = { text, ids };
  const split = await encode(tokSplit, text);
  if (split.join() !== ids.join()) {
    c.ids_split_special = split;
  }
  c.decoded = await tok.decode(ids, false);
  const skipped = await tok.decode(ids, true);
  if (skipped !== c.decoded) {
    c.decoded_skip_special = skipped;
  }
  cases.push(c);
}

// Decoding of id sequences that are not whole characters: single-byte tokens of a multi-byte character,
// cut short, out of order, plus special tokens with and without skipping.
const vocab = json.model.vocab;
const byteChar = new Map();
{
  const bs = [];
  for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = bs.slice();
  let n = 0;
  for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
  bs.forEach((b, i) => byteChar.set(b, String.fromCodePoint(cs[i])));
}
const byteIds = (bytes) => bytes.map((b) => vocab[byteChar.get(b)]);
const special = (s) => json.added_tokens.find((t) => t.content === s).id;
const decodeIds = [
  byteIds([0xe4, 0xbd, 0xa0]), byteIds([0xe4, 0xbd]), byteIds([0xe4]), byteIds([0xbd, 0xa0]), byteIds([0xe4, 0x41]),
  byteIds([0xf0, 0x9f, 0x98, 0x80]), byteIds([0xf0, 0x9f, 0x98]), byteIds([0xf0, 0x9f, 0x41, 0x98, 0x80]),
  byteIds([0xc0, 0x80]), byteIds([0xed, 0xa0, 0x80]), byteIds([0xff, 0xfe, 0x41]), byteIds([0xe0, 0x80, 0x80]),
  byteIds([0xf4, 0x90, 0x80, 0x80]), byteIds([0x41, 0xe4, 0xbd]),
  [special("<|im_start|>"), ...byteIds([0x68, 0x69]), special("<|im_end|>"), special("<think>")],
  [special("<|endoftext|>")], [],
];
const decodeCases = [];
for (const ids of decodeIds) {
  decodeCases.push({ ids, text: await tok.decode(ids, false), text_skip_special: await tok.decode(ids, true) });
}

const pkg = createRequire(import.meta.url)("tokenizers/package.json");
const header = {
  generator: "tools/tokenizer-reference/generate.mjs",
  reference: `Hugging Face tokenizers (npm tokenizers ${pkg.version}): Tokenizer.fromFile, encode(text, null, {addSpecialTokens: false}), decode(ids, skipSpecialTokens)`,
  tokenizer: path.basename(input),
  note: "ids_split_special (present where it differs from ids): the same text encoded with special added tokens taken as plain text",
};
// one case per line keeps the file small and its diffs readable
const lines = (list) => list.map((c) => "  " + JSON.stringify(c)).join(",\n");
const body = JSON.stringify(header, null, 1).replace(/\n}$/, "");
fs.writeFileSync(output, `${body},\n "cases": [\n${lines(cases)}\n ],\n "decode_cases": [\n${lines(decodeCases)}\n ]\n}\n`);
fs.rmSync(tmp, { recursive: true });
console.log(`${output}: ${cases.length} encode cases, ${decodeCases.length} decode cases`);
