// Core memory's budget, as the server counts it, for the live bar of the Core page: the
// entries once a batch of operations is applied. No DOM here (tests run it in Node).

/** Characters (Unicode code points) of ``entries`` joined by one newline, as the server counts. */
export function size(entries) {
  return [...entries.join("\n")].length;
}

/** How many times ``text`` occurs in ``entry``, overlapping ones included ("aa" is twice in
 * "aaa"), as the server counts before it patches a span. */
function occurrences(entry, text) {
  if (!text) return 0;
  let count = 0;
  for (let start = entry.indexOf(text); start !== -1; start = entry.indexOf(text, start + 1)) {
    count += 1;
  }
  return count;
}

/**
 * Which entry ``oldText`` names, as the server picks it: the one entry equal to it (even
 * when it is also part of a longer one), else the one entry containing it (once, when it
 * names a ``span`` to change); -1 when none or several do (the server refuses that
 * operation and explains why).
 */
export function namedEntry(entries, oldText, { span = false } = {}) {
  const equal = entries.flatMap((entry, position) => (entry === oldText.trim() ? [position] : []));
  if (equal.length === 1) return equal[0];
  const containing = entries.flatMap((entry, position) => {
    const count = occurrences(entry, oldText);
    return count ? [[position, count]] : [];
  });
  if (containing.length !== 1 || (span && containing[0][1] > 1)) return -1;
  return containing[0][0];
}

/**
 * An entry patched as the server patches it: replaced whole when ``oldText`` is the
 * whole entry (spaces around it aside), else that one span replaced, literally (a
 * ``$&`` or ``$$`` in the new text is text, not a String.replace pattern).
 */
function patched(entry, oldText, content) {
  if (entry === oldText.trim()) return content.trim();
  return entry.replace(oldText, () => content).trim();
}

/**
 * The entries once ``operations`` are applied (the server's rules, simplified: it has the
 * last word and explains any refusal).
 */
export function projected(entries, operations) {
  const result = [...entries];
  for (const operation of operations) {
    if (operation.action === "add") {
      const text = operation.content.trim();
      if (text && !result.includes(text)) result.push(text);
    } else {
      const remove = operation.action === "remove";
      const position = namedEntry(result, operation.old_text, { span: !remove });
      if (position < 0) continue;
      if (remove) result.splice(position, 1);
      else result[position] = patched(result[position], operation.old_text, operation.content);
    }
  }
  return result;
}
