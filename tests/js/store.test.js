// Reading a bundle's packed part (ui/explorer/store.js unpack): base64 of gzip of JSON, as ui/bundle.py
// writes it, back to the value, whatever bytes the gzip holds.
import assert from "node:assert/strict";
import { test } from "node:test";
import { gzipSync } from "node:zlib";

globalThis.window ??= {}; // (the module names its loader on window)
const { unpack } = await import("../../ui/explorer/store.js");

test("a packed part unpacks to its value, every byte value and non-ASCII text included", async () => {
  const value = { text: "残差连接 keeps x", numbers: Array.from({ length: 5000 }, (_, i) => Math.sin(i)), bytes: [] };
  for (let b = 0; b < 256; b += 1) value.bytes.push(String.fromCharCode(b));
  const packed = gzipSync(Buffer.from(JSON.stringify(value))).toString("base64");
  assert.deepEqual(await unpack(packed), value);
});
