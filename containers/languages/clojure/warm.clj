;; Run once when the image is built, under -XX:ArchiveClassesAtExit: the classes it loads (clojure.core,
;; clojure.test and the namespaces MultiPL-E's programs require) go into a class-data-sharing archive that
;; each candidate's JVM maps instead of loading and verifying them again. It changes which bytes the JVM
;; reads at start, not what any program does.
(require '[clojure.test :refer [deftest is run-test]] '[clojure.string :as str] '[clojure.set :as set])
(defn add [a b] (+ a b))
(deftest warm (is (= (add 1 2) 3)) (is (= (str/join "," (sort (set/union #{1} #{2}))) "1,2")))
(run-test warm)
