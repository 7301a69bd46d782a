export const print = (value: string) => process.stdout.write(value.endsWith('\n') ? value : `${value}\n`);
