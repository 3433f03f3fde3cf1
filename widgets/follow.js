// A live class's teacher's page follows the class (widgets/live_class.py): about every `every` seconds (drawn
// within ± `spread` of it each time) it reads what the page shows of the class over HTTP (server/routes.py),
// and when it is not what the page shows (`seen`), or when another server process answers than the one that
// drew the page (`process`: a cluster's replica died and the page's session went with it), it asks for a run
// of the page. If no run mounts it again (the request was sent while the socket was down), it asks again
// after `retry` seconds, then twice as long each time: a request stops a run still going on a busy server
// and starts it over. A refused read (too many from this computer: 429) waits as long as the server says.
// Nothing runs on the server between changes but that small read.

const timers = new WeakMap(); // parentElement -> its pending read

export default function follow({ data, parentElement, setTriggerValue }) {
  const { url, seen, process, every, spread, retry } = data;
  const later = () => every * 1000 * (1 - spread + 2 * spread * Math.random());
  let backoff = retry * 1000;
  const read = async () => {
    let wait = later();
    try {
      const response = await fetch(url, { cache: "no-store" });
      const answer = response.ok ? await response.json() : null; // (429: too many reads from this computer)
      if (answer === null) {
        wait = Math.max(wait, 1000 * Number(response.headers.get("Retry-After") || 0));
      } else if (answer.version !== seen || answer.process !== process) {
        setTriggerValue("moved", answer.version);
        wait = backoff;
        backoff *= 2;
      }
    } catch {
      // the server is away for a moment: the next read tells
    }
    timers.set(parentElement, setTimeout(read, wait));
  };
  clearTimeout(timers.get(parentElement)); // a run of the page mounts it again, maybe on a new version
  timers.set(parentElement, setTimeout(read, later()));
  return () => clearTimeout(timers.get(parentElement));
}
