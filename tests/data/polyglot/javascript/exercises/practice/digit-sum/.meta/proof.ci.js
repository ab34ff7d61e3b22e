export const digitSum = (n) => [...String(n)].reduce((s, c) => s + Number(c), 0);
