/**
 * The simulated TRON node in a process of its own (the benchmarks measure the scanner, not the
 * node's block generation): `node dist/bench/lib/sim-node-process.js '{"fillerPerBlock":[200,400]}'`
 * prints `{"url": ...}` on its first line and serves until killed.
 */
import { startSimulatedTron, type SimulatedTronOptions } from '../../src/devnet/tron-node.js';

const options = JSON.parse(process.argv[2] ?? '{}') as SimulatedTronOptions;
const node = await startSimulatedTron(options);
process.stdout.write(`${JSON.stringify({ url: node.url })}\n`);
process.on('SIGTERM', () => void node.close().then(() => process.exit(0)));
