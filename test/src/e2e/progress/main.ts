// `./dev follow` (and the end of `./dev up`): prints what Icepack does, one line per step,
// until Ctrl-C. Stopping the follower leaves Icepack running.
import { infraEnv } from '../../infra/env.ts';
import { ProgressFollower } from './progress-follower.ts';

const since = process.env.ICEPACK_FOLLOW_SINCE;
const follower = new ProgressFollower({
  brokers: infraEnv().kafkaBrokers,
  print: (line, at) => console.log(`${at.toISOString().slice(11, 19)}  ${line}`),
  ...(since === undefined || since === '' ? {} : { since: new Date(since) }),
});

let stopping = false;
const stop = () => {
  if (stopping) process.exit(130);
  stopping = true;
  console.log(
    '\nStopped following. Icepack keeps running: ./dev status, ./dev follow, ./dev down.',
  );
  void follower.stop().finally(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);

await follower.start();
