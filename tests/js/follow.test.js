// A live class's teacher's follower (widgets/follow.js) with a stand-in server: when it reads what its page shows,
// what it asks for, that a refused read waits as long as the server says, and that a page unmounted stops reading.
import assert from "node:assert/strict";
import { mock, test } from "node:test";

import follow from "../../widgets/follow.js";

const data = { url: "/api/class/ABCDE/version?me=x", seen: "3", process: "p1", every: 1, spread: 0.3, retry: 5 };

function mounted(versions, random = 0.5, more = {}) {
  const reads = [], triggers = [];
  globalThis.fetch = async (url) => {
    reads.push(url);
    const version = versions.shift();
    if (version instanceof Error) throw version;
    if (version?.refused) return { ok: false, status: 429, headers: new Map([["Retry-After", String(version.refused)]]) };
    return { ok: true, json: async () => (Array.isArray(version) ? { version: version[0], process: version[1] }
      : { version, process: "p1" }) };
  };
  mock.method(Math, "random", () => random);
  const parentElement = {};
  const unmount = follow({ data: { ...data, ...more }, parentElement, setTriggerValue: (name, value) => triggers.push([name, value]) });
  return { reads, triggers, unmount, parentElement };
}

async function after(ms) { // move the clock on, then let the read's promises settle
  mock.timers.tick(ms);
  for (let i = 0; i < 5; i += 1) await new Promise((done) => setImmediate(done));
}

test("reads about every second, within the spread, and asks for nothing while the class stays", async (t) => {
  for (const [random, wait] of [[0, 700], [0.999999, 1300]]) {
    mock.timers.enable({ apis: ["setTimeout"] });
    const page = mounted(["3", "3"], random);
    await after(wait - 1);
    assert.equal(page.reads.length, 0);
    await after(1);
    assert.deepEqual(page.reads, [data.url]);
    await after(wait);
    assert.equal(page.reads.length, 2);
    assert.deepEqual(page.triggers, []);
    page.unmount();
    mock.timers.reset();
    mock.restoreAll();
  }
  t.diagnostic("the first read and the next both wait every × (1 ± spread)");
});

test("a new version (or an ended class) asks for a run once, again only after the retry, then twice as late", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const page = mounted(["4", null, new Error("offline"), "3"]); // (retry: 5 s here)
  await after(1000);
  assert.deepEqual(page.triggers, [["moved", "4"]]);
  await after(4999);
  assert.equal(page.reads.length, 1);
  await after(1);
  assert.deepEqual(page.triggers, [["moved", "4"], ["moved", null]]);
  await after(9999);
  assert.equal(page.reads.length, 2);
  await after(1); // a failed read: the next one tells
  await after(1000);
  assert.equal(page.reads.length, 4);
  assert.equal(page.triggers.length, 2);
  page.unmount();
  mock.timers.reset();
  mock.restoreAll();
});

test("another server process answering (the page's replica died) asks for a run on the same version", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const page = mounted(["3", ["3", "p2"]]);
  await after(1000);
  assert.deepEqual(page.triggers, []);
  await after(1000);
  assert.deepEqual(page.triggers, [["moved", "3"]]);
  page.unmount();
  mock.timers.reset();
  mock.restoreAll();
});

test("a page run again restarts the reads on its version; an unmounted page reads no more", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const page = mounted(["5", "5", "5"]);
  await after(900);
  follow({ data: { ...data, seen: "5" }, parentElement: page.parentElement, setTriggerValue: () => assert.fail() });
  await after(300); // the first mount's read would have been due: it was cancelled
  assert.equal(page.reads.length, 0);
  await after(700);
  assert.equal(page.reads.length, 1);
  page.unmount();
  await after(10_000);
  assert.equal(page.reads.length, 1);
  mock.timers.reset();
  mock.restoreAll();
});

test("a read refused (429: too many from this computer) asks for no run and waits as long as the server says", async () => {
  mock.timers.enable({ apis: ["setTimeout"] });
  const page = mounted([{ refused: 7 }, "4"]);
  await after(1000);
  assert.equal(page.reads.length, 1);
  await after(6999);
  assert.equal(page.reads.length, 1);
  await after(1);
  assert.deepEqual(page.triggers, [["moved", "4"]]);
  page.unmount();
  mock.timers.reset();
  mock.restoreAll();
});
