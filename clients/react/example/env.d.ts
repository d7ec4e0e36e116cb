// Tells TypeScript that the example's stylesheet imports are side effects (esbuild bundles them).
declare module '*.css';
