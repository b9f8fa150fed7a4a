/**
 * What to install for a C compiler that targets another CPU (pack:offline prebuilds the software device for the
 * BlueField's Arm cores on an x86 machine): the distributions' cross-compiler packages, not the native gcc.
 */
const DEBIAN: Record<string, string> = {
  aarch64: "gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
  x86_64: "gcc-x86-64-linux-gnu libc6-dev-amd64-cross",
};
const FEDORA: Record<string, string> = {
  aarch64: "gcc-aarch64-linux-gnu sysroot-aarch64-fc-glibc",
  x86_64: "gcc-x86_64-linux-gnu sysroot-x86_64-fc-glibc",
};

/** The line pack:offline prints when `cc` (for `arch`) is missing; `nativeArch` is this machine's CPU. */
export function compilerMissingHint(arch: string, nativeArch: string, cc: string): string {
  if (arch === nativeArch) return `no C compiler \`${cc}\` (Debian/Ubuntu: apt-get install gcc libc6-dev; RHEL: dnf install gcc; or set CC)`;
  const debian = DEBIAN[arch] ?? `gcc-${arch}-linux-gnu`;
  const fedora = FEDORA[arch] ?? `gcc-${arch}-linux-gnu`;
  return `no cross compiler \`${cc}\` for ${arch} (Debian/Ubuntu: apt-get install ${debian}; Fedora: dnf install ${fedora})`;
}
