/** A value found in a text: `[start, end)` in UTF-16 units. */
export type Found = readonly [start: number, end: number];
