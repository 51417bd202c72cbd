'use client';
// A client component that runs attnkit on the page and in a module worker.
import { useEffect, useState } from 'react';
import { runAttnkit } from '../use.js';

export default function Page() {
  const [out, setOut] = useState('loading');
  const [worker, setWorker] = useState('loading');
  useEffect(() => {
    runAttnkit().then(setOut, (e) => setOut(`failed: ${e.message}`));
    const w = new Worker(new URL('../worker.js', import.meta.url), { type: 'module' });
    w.onmessage = (e) => setWorker(e.data);
    w.onerror = (e) => setWorker(`failed: ${e.message}`);
    return () => w.terminate();
  }, []);
  return (
    <main>
      <p id="out">{out}</p>
      <p id="worker">{worker}</p>
    </main>
  );
}
