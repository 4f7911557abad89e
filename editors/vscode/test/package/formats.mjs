// Readers for what the packaging test looks into, written against the
// formats' specifications so that the test needs nothing installed: the
// .vsix (a zip), the agentls executables (ELF, Mach-O, PE) and the build
// information Go writes into every binary.
import * as zlib from 'node:zlib';

/**
 * readZip lists the entries of a zip archive from its central directory:
 * name, Unix mode (when the archive was made on Unix) and a read function.
 */
export function readZip(buf) {
  const min = Math.max(0, buf.length - 22 - 0xffff);
  let eocd = -1;
  for (let i = buf.length - 22; i >= min; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) {
    throw new Error('not a zip archive: no end of central directory');
  }
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = [];
  for (let k = 0; k < count; k++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) {
      throw new Error(`zip: central directory entry ${k} is damaged`);
    }
    const madeBy = buf.readUInt16LE(p + 4);
    const method = buf.readUInt16LE(p + 10);
    const csize = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const attrs = buf.readUInt32LE(p + 38);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;
    if (csize === 0xffffffff || local === 0xffffffff) {
      throw new Error(`zip: ${name} needs zip64, which a .vsix never does`);
    }
    entries.push({
      name,
      mode: madeBy >> 8 === 3 ? (attrs >>> 16) & 0o7777 : undefined,
      read() {
        if (buf.readUInt32LE(local) !== 0x04034b50) {
          throw new Error(`zip: the local header of ${name} is damaged`);
        }
        const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
        const data = buf.subarray(start, start + csize);
        if (method === 0) {
          return data;
        }
        if (method === 8) {
          return zlib.inflateRawSync(data);
        }
        throw new Error(`zip: ${name} uses compression method ${method}`);
      },
    });
  }
  return entries;
}

/**
 * executable describes an executable: its format (elf, macho, pe), its
 * architecture (x86-64, arm64), whether it is an executable image (not an
 * object or a library), how many symbols its symbol table defines, its
 * debug sections, and for Mach-O whether it carries a code signature.
 */
export function executable(b) {
  if (b.length >= 64 && b.readUInt32BE(0) === 0x7f454c46) {
    return elf(b);
  }
  if (b.length >= 32 && b.readUInt32LE(0) === 0xfeedfacf) {
    return macho(b);
  }
  if (b.length >= 64 && b.toString('latin1', 0, 2) === 'MZ') {
    return pe(b);
  }
  throw new Error(`not an ELF, 64-bit Mach-O or PE file (starts ${b.subarray(0, 4).toString('hex')})`);
}

function elf(b) {
  if (b[4] !== 2 || b[5] !== 1) {
    throw new Error('ELF: not 64-bit little-endian');
  }
  const type = b.readUInt16LE(16);
  const machine = { 62: 'x86-64', 183: 'arm64' }[b.readUInt16LE(18)] ?? `machine ${b.readUInt16LE(18)}`;
  const shoff = Number(b.readBigUInt64LE(0x28));
  const shentsize = b.readUInt16LE(0x3a);
  const shnum = b.readUInt16LE(0x3c);
  const shstrndx = b.readUInt16LE(0x3e);
  const sections = [];
  for (let i = 0; i < shnum; i++) {
    const h = shoff + i * shentsize;
    sections.push({
      nameOff: b.readUInt32LE(h),
      type: b.readUInt32LE(h + 4),
      offset: Number(b.readBigUInt64LE(h + 0x18)),
      size: Number(b.readBigUInt64LE(h + 0x20)),
      entsize: Number(b.readBigUInt64LE(h + 0x38)),
    });
  }
  const strtab = sections[shstrndx];
  const name = (s) => {
    const start = strtab.offset + s.nameOff;
    return b.toString('latin1', start, b.indexOf(0, start));
  };
  let symbols = 0;
  for (const s of sections) {
    if (s.type === 2 /* SHT_SYMTAB */) {
      symbols += s.size / (s.entsize || 24);
    }
  }
  return {
    format: 'elf',
    arch: machine,
    image: type === 2 /* ET_EXEC */ || type === 3 /* ET_DYN */,
    symbols,
    debug: sections.map(name).filter((n) => /^\.z?debug/.test(n)),
  };
}

function macho(b) {
  const cpu = { 0x01000007: 'x86-64', 0x0100000c: 'arm64' }[b.readUInt32LE(4)] ?? `cputype 0x${b.readUInt32LE(4).toString(16)}`;
  const ncmds = b.readUInt32LE(16);
  const debug = [];
  let symbols = 0;
  let signed = false;
  let p = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = b.readUInt32LE(p);
    const size = b.readUInt32LE(p + 4);
    if (cmd === 0x19 /* LC_SEGMENT_64 */) {
      const seg = cstr(b, p + 8, 16);
      if (seg === '__DWARF') {
        debug.push(seg);
      }
      const nsects = b.readUInt32LE(p + 64);
      for (let s = 0; s < nsects; s++) {
        const sect = cstr(b, p + 72 + s * 80, 16);
        if (/^__z?debug/.test(sect)) {
          debug.push(`${seg},${sect}`);
        }
      }
    } else if (cmd === 0x2 /* LC_SYMTAB */) {
      const symoff = b.readUInt32LE(p + 8);
      const nsyms = b.readUInt32LE(p + 12);
      for (let s = 0; s < nsyms; s++) {
        const type = b[symoff + s * 16 + 4];
        // Stabs (debug entries) and symbols defined here count; the
        // undefined ones are the imports dyld binds, which a stripped
        // binary keeps.
        if ((type & 0xe0) !== 0 || (type & 0x0e) !== 0) {
          symbols++;
        }
      }
    } else if (cmd === 0x1d /* LC_CODE_SIGNATURE */) {
      signed = true;
    }
    p += size;
  }
  return { format: 'macho', arch: cpu, image: b.readUInt32LE(12) === 2 /* MH_EXECUTE */, symbols, debug, signed };
}

function pe(b) {
  const lfanew = b.readUInt32LE(0x3c);
  if (b.toString('latin1', lfanew, lfanew + 4) !== 'PE\0\0') {
    throw new Error('PE: no PE signature');
  }
  const coff = lfanew + 4;
  const machine = { 0x8664: 'x86-64', 0xaa64: 'arm64' }[b.readUInt16LE(coff)] ?? `machine 0x${b.readUInt16LE(coff).toString(16)}`;
  const nsections = b.readUInt16LE(coff + 2);
  const symbols = b.readUInt32LE(coff + 12);
  const optSize = b.readUInt16LE(coff + 16);
  const characteristics = b.readUInt16LE(coff + 18);
  const debug = [];
  for (let i = 0; i < nsections; i++) {
    const name = cstr(b, coff + 20 + optSize + i * 40, 8);
    // A name longer than 8 bytes ("/4") lives in the symbol table's strings:
    // only debug sections have such names in a Go binary.
    if (/^\.z?debug/.test(name) || name.startsWith('/')) {
      debug.push(name);
    }
  }
  return {
    format: 'pe',
    arch: machine,
    image: (characteristics & 0x0002 /* IMAGE_FILE_EXECUTABLE_IMAGE */) !== 0 && (characteristics & 0x2000 /* DLL */) === 0,
    symbols,
    debug,
  };
}

function cstr(b, start, max) {
  const end = b.indexOf(0, start);
  return b.toString('latin1', start, end < 0 || end > start + max ? start + max : end);
}

/**
 * goBuildInfo reads the build information the Go linker writes into every
 * binary (what `go version -m` prints): the Go version and the build
 * settings (GOOS, GOARCH, CGO_ENABLED, -trimpath, …; -ldflags is left out
 * under -trimpath), and where it lies in b (start, end).
 */
export function goBuildInfo(b) {
  const at = b.indexOf(Buffer.from('\xff Go buildinf:', 'latin1'));
  if (at < 0) {
    throw new Error('no Go build information');
  }
  if ((b[at + 15] & 2) === 0) {
    throw new Error('Go build information of a Go older than 1.18');
  }
  let p = at + 32;
  const next = () => {
    let n = 0;
    let shift = 0;
    for (;;) {
      const c = b[p++];
      n += (c & 0x7f) * 2 ** shift;
      if ((c & 0x80) === 0) {
        break;
      }
      shift += 7;
    }
    const s = b.toString('utf8', p, p + n);
    p += n;
    return s;
  };
  const goVersion = next();
  let mod = next();
  if (mod.length >= 33 && mod[mod.length - 17] === '\n') {
    mod = mod.slice(16, -16); // the sentinels around it
  }
  const settings = {};
  for (const line of mod.split('\n')) {
    const m = /^build\t([^=]+)=(.*)$/.exec(line);
    if (m) {
      settings[m[1]] = m[2].startsWith('"') ? JSON.parse(m[2]) : m[2];
    }
  }
  return { goVersion, settings, start: at, end: p };
}
