// The browser tests of components.test.mjs again, on the example app built
// with React 18 (example/build.mjs --react18): the oldest React that
// herald-react's peer range allows.

process.env.HERALD_REACT_EXAMPLE = 'dist-react18';
await import('./components.test.mjs');
