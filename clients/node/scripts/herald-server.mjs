// herald-node's tests and type generator start the real `herald` binary with
// the starter clients/js already has (a temp data dir, random bootstrap keys,
// 127.0.0.1 and a free port; `extraArgs` passes `herald serve` flags such as a
// low --admin-rate or --egress-allow). It is a test script, never packed.

export { startHerald, fetchOpenapi, hex, sleep, BIN, ROOT } from '../../js/scripts/herald-server.mjs';
