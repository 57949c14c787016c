import { crc32, deflateSync } from 'node:zlib';

/**
 * The console's icon, `/favicon.ico`: a crescent moon, drawn here rather than kept as a binary
 * file. Browsers ask for `/favicon.ico` on their own (for the JSON under `/api/`, the dashboard),
 * so without it every such page logs a 404. One 32×32 PNG inside an ICO, as every browser reads it.
 */

const SIZE = 32;
/** Samples per pixel along each axis: the crescent's edge is smoothed, not jagged. */
const SAMPLES = 4;
/** The console's link blue (`--link`, light theme). */
const COLOUR = [0x05, 0x50, 0xae] as const;

/** How much of pixel (x, y) the crescent covers, 0 to 1: inside the moon, outside its shadow. */
function coverage(x: number, y: number): number {
  let inside = 0;
  for (let i = 0; i < SAMPLES; i++)
    for (let j = 0; j < SAMPLES; j++) {
      const px = x + (i + 0.5) / SAMPLES;
      const py = y + (j + 0.5) / SAMPLES;
      const moon = (px - 16) ** 2 + (py - 16) ** 2 <= 14 ** 2;
      const shadow = (px - 23) ** 2 + (py - 10) ** 2 <= 12 ** 2;
      if (moon && !shadow) inside += 1;
    }
  return inside / SAMPLES ** 2;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function png(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header.writeUInt8(8, 8); // bits per channel
  header.writeUInt8(6, 9); // RGBA
  const rows = Buffer.alloc(SIZE * (1 + SIZE * 4));
  for (let y = 0; y < SIZE; y++) {
    const row = y * (1 + SIZE * 4); // each row starts with its filter byte: 0, none
    for (let x = 0; x < SIZE; x++) rows.set([...COLOUR, Math.round(255 * coverage(x, y))], row + 1 + x * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function ico(image: Buffer): Buffer {
  const directory = Buffer.alloc(6 + 16);
  directory.writeUInt16LE(1, 2); // an icon
  directory.writeUInt16LE(1, 4); // one image
  directory.writeUInt8(SIZE, 6);
  directory.writeUInt8(SIZE, 7);
  directory.writeUInt16LE(1, 10); // colour planes
  directory.writeUInt16LE(32, 12); // bits per pixel
  directory.writeUInt32LE(image.length, 14);
  directory.writeUInt32LE(directory.length, 18); // where the image starts
  return Buffer.concat([directory, image]);
}

export const FAVICON: Buffer = ico(png());
