/**
 * The Redis Cluster slot of a key, as a cluster computes it (CRC16/XMODEM of the key, or of its
 * hash tag — the text inside the first `{…}` when it is not empty — modulo 16,384), so a test on
 * a single Redis can tell which keys a cluster would keep together.
 */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(key, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}
