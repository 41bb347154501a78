import madge from 'madge';

/**
 * Fails when the imports of src/ or bench/ form a cycle, between files or between the parts of
 * the architecture: each top-level folder is one node, each file directly in the root is its
 * own node, and type imports count. Also fails when a file imports another folder's repository
 * (`*-repo.ts`): a room reaches another room's data through its service. With `--graph`, prints
 * src/'s part-to-part imports instead.
 */
const named = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const roots = named.length ? named : ['src', 'bench'];

const problems: string[] = [];
for (const root of roots) {
  const { files, parts, unresolved, fileCycles, foreignRepos } = await importsOf(root);
  if (process.argv.includes('--graph')) {
    for (const [part, edges] of [...parts].sort())
      console.log(`${part} → ${[...edges].sort().join(', ')}`);
    process.exit(0);
  }
  if (unresolved.length)
    problems.push(`${root}: imports that could not be resolved: ${unresolved.join(', ')}`);
  for (const cycle of fileCycles)
    problems.push(`${root}: file cycle: ${cycle.join(' → ')} → ${cycle[0]}`);
  for (const cycle of cyclesOf(parts)) problems.push(`${root}: folder cycle: ${cycle.join(' → ')}`);
  for (const [file, repo] of foreignRepos)
    problems.push(`${root}: ${file} imports another room's repository ${repo}; use its service`);
  if (!problems.length)
    console.log(`imports: no cycles among ${files} files in ${parts.size} parts of ${root}/`);
}
if (problems.length) {
  console.error(`Import check failed:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}

async function importsOf(root: string) {
  const result = await madge(root, {
    fileExtensions: ['ts'],
    tsConfig: 'tsconfig.json',
    detectiveOptions: { ts: { skipTypeImports: false, mixedImports: true } },
  });
  const files = result.obj();
  // A package's subpath export (`@electric-sql/pglite/contrib/pg_trgm`) is beyond madge's
  // resolver; only the project's own imports can form the cycles checked here.
  const unresolved = result.warnings().skipped.filter((name) => name.startsWith('.'));
  const partOf = (file: string) => (file.includes('/') ? `${file.split('/')[0]}/` : file);
  const parts = new Map<string, Set<string>>();
  for (const [file, imports] of Object.entries(files)) {
    const from = partOf(file);
    const edges = parts.get(from) ?? new Set<string>();
    parts.set(from, edges);
    for (const imported of imports) if (partOf(imported) !== from) edges.add(partOf(imported));
  }
  const foreignRepos = Object.entries(files).flatMap(([file, imports]) =>
    imports
      .filter((imported) => imported.endsWith('-repo.ts') && partOf(imported) !== partOf(file))
      .map((imported) => [file, imported] as const),
  );
  return {
    files: Object.keys(files).length,
    parts,
    unresolved,
    fileCycles: result.circular(),
    foreignRepos,
  };
}

/** The strongly connected components with more than one node (Tarjan), each as a readable cycle. */
function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];

  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) components.push(component.reverse());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return components;
}
