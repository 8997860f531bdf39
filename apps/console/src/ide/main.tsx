/** Placeholder until the IDE page is built. */
document.getElementById('ide')!.textContent = 'GraphQL IDE';
