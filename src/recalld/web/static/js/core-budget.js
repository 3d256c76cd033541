// Core memory's budget, as the server counts it, for the live bar of the Core page: the
// entries once a batch of operations is applied. No DOM here (tests run it in Node).

/** Characters (Unicode code points) of ``entries`` joined by one newline, as the server counts. */
export function size(entries) {
  return [...entries.join("\n")].length;
}

/**
 * Which entry ``oldText`` names, as the server picks it: the one entry equal to it (even
 * when it is also part of a longer one), else the one entry containing it; -1 when none
 * or several do (the server refuses that operation and explains why).
 */
export function namedEntry(entries, oldText) {
  const equal = entries.flatMap((entry, position) => (entry === oldText.trim() ? [position] : []));
  if (equal.length === 1) return equal[0];
  const containing = entries.flatMap((entry, position) => (entry.includes(oldText) ? [position] : []));
  return containing.length === 1 ? containing[0] : -1;
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
      const position = namedEntry(result, operation.old_text);
      if (position < 0) continue;
      if (operation.action === "remove") result.splice(position, 1);
      else result[position] = result[position].replace(operation.old_text, operation.content).trim();
    }
  }
  return result;
}
