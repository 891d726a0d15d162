-- Give back holder ARGV[2]'s slot of key ARGV[1] (a no-op when it holds none).
slot_drop(ARGV[1], ARGV[2])
return 1
