import { digitSum } from './digit-sum';

describe('digit sum', () => {
  test('zero', () => {
    expect(digitSum(0)).toEqual(0);
  });

  xtest('one digit', () => {
    expect(digitSum(7)).toEqual(7);
  });

  xtest('many digits', () => {
    expect(digitSum(90817)).toEqual(25);
  });
});
