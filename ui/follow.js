// A live class's page follows the class (ui/classroom.py): about every `every` seconds (drawn within
// ± `spread` of it each time, so that a class's pages do not ask at once) it reads what the page shows of
// the class over HTTP (server/routes.py), and when it is not what the page shows (`seen`), when another
// server process answers than the one that drew the page (`process`: a cluster's replica died and the
// page's session went with it), or when the page has more to do (`again`), it asks for a run of the page.
// If no run mounts it again (the request was sent while the socket was down), it asks again after `retry`
// seconds, then twice as long each time: a request stops a run still going on a busy server and starts it
// over. Nothing runs on the server between changes but that small read.

const timers = new WeakMap(); // parentElement -> its pending read

export default function follow({ data, parentElement, setTriggerValue }) {
  const { url, seen, again, process, every, spread, retry } = data;
  const later = () => every * 1000 * (1 - spread + 2 * spread * Math.random());
  let backoff = retry * 1000;
  const read = async () => {
    let wait = later();
    try {
      const response = await fetch(url, { cache: "no-store" });
      const answer = await response.json();
      if (again || answer.version !== seen || answer.process !== process) {
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
