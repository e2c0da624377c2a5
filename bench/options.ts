/** Command-line options of the benchmarks. */
import { parseArgs } from 'node:util';

/** The number an option gives; throws unless it is a finite number of at least `min`. */
export function numberOption(name: string, raw: string | undefined, min: number): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number >= ${min}`);
  return value;
}

export interface FloorOptions {
  seconds: number;
  rounds: number;
  connections: number;
  /** Who checkpoints the appending servers' files: the service's checkpointer thread, or SQLite. */
  checkpoint: 'service' | 'sqlite';
}

/** The options of `npm run bench:floor`. */
export function floorOptions(args = process.argv.slice(2)): FloorOptions {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '64' },
      checkpoint: { type: 'string', default: 'service' },
    },
    strict: true,
  });
  if (values.checkpoint !== 'service' && values.checkpoint !== 'sqlite')
    throw new Error('--checkpoint must be service or sqlite');
  return {
    seconds: numberOption('duration', values.duration, 1),
    rounds: Math.round(numberOption('rounds', values.rounds, 1)),
    connections: Math.round(numberOption('connections', values.connections, 1)),
    checkpoint: values.checkpoint,
  };
}
