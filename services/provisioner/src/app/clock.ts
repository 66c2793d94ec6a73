/** Now as ISO-8601; injectable so tests can move time (drain timeouts). */
export type Clock = () => Date;
export const systemClock: Clock = () => new Date();
