/** setTimeout caps delays at 2^31-1 ms; longer deadlines re-arm until due. */
const MAX_DELAY = 2 ** 31 - 1;

/** Calls `onDeadline` at absolute time `at` (ms epoch); returns a disarm function. */
export function armDeadline(at: number, onDeadline: () => void): () => void {
  let timer: NodeJS.Timeout;
  const arm = () => {
    const delay = at - Date.now();
    if (delay <= 0) {
      timer = setTimeout(onDeadline, 0);
      return;
    }
    timer = setTimeout(delay > MAX_DELAY ? arm : onDeadline, Math.min(delay, MAX_DELAY));
  };
  arm();
  return () => clearTimeout(timer);
}
