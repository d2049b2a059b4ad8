import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

/**
 * One entry of a zip archive (an xlsx), read without reading the rest: the end of central
 * directory record (its last 22 bytes, before a comment) says where the central directory is; its
 * entry for `name` says where the entry's data is and how it is compressed (stored or deflated).
 * Undefined when the archive has no such entry. Archives past 4 GB (zip64) are not read: undefined.
 */
export function readZipEntry(file: string, name: string): Buffer | undefined {
  const handle = openSync(file, 'r');
  try {
    const read = (position: number, length: number) => {
      const buffer = Buffer.alloc(length);
      const got = readSync(handle, buffer, 0, length, position);
      return buffer.subarray(0, got);
    };
    const size = statSync(file).size;
    const tailLength = Math.min(size, 65_535 + 22);
    const tail = read(size - tailLength, tailLength);
    let end = -1;
    for (let at = tail.length - 22; at >= 0 && end < 0; at--) if (tail.readUInt32LE(at) === 0x06054b50 && at + 22 + tail.readUInt16LE(at + 20) === tail.length) end = at;
    if (end < 0) return undefined;
    const directorySize = tail.readUInt32LE(end + 12);
    const directoryOffset = tail.readUInt32LE(end + 16);
    if (directoryOffset === 0xffffffff || directorySize === 0xffffffff) return undefined;
    const directory = read(directoryOffset, directorySize);
    for (let at = 0; at + 46 <= directory.length && directory.readUInt32LE(at) === 0x02014b50; ) {
      const method = directory.readUInt16LE(at + 10);
      const compressedSize = directory.readUInt32LE(at + 20);
      const nameLength = directory.readUInt16LE(at + 28);
      const extraLength = directory.readUInt16LE(at + 30);
      const commentLength = directory.readUInt16LE(at + 32);
      const localOffset = directory.readUInt32LE(at + 42);
      // Entry names may start with a slash (exceljs writes some so).
      const entry = directory.toString('utf8', at + 46, at + 46 + nameLength).replace(/^\//, '');
      if (entry === name) {
        const local = read(localOffset, 30);
        if (local.readUInt32LE(0) !== 0x04034b50) return undefined;
        const data = read(localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28), compressedSize);
        if (method === 0) return data;
        return method === 8 ? inflateRawSync(data) : undefined;
      }
      at += 46 + nameLength + extraLength + commentLength;
    }
    return undefined;
  } finally {
    closeSync(handle);
  }
}
