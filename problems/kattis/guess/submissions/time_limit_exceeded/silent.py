import time
time.sleep(60)
