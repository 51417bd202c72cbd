// A static export, so that the test serves the built files as any host would.
export default { output: 'export' };
