/**
 * mulberry32: a small, fast, seeded PRNG in [0, 1). Not for secrets (ids and tokens use
 * node:crypto); for repeatable streams such as the simulated chain's filler and test runs that
 * must replay from a printed seed.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
