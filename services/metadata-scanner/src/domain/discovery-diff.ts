/** Keys known from the last complete walk that this walk did not find: dropped tables. */
export function disappearedTables(known: Iterable<string>, found: ReadonlySet<string>): string[] {
  const gone: string[] = [];
  for (const key of known) if (!found.has(key)) gone.push(key);
  return gone.sort();
}
