import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import weka.classifiers.Classifier;
import weka.classifiers.Evaluation;

/**
 * Weka's command line for many runs in one JVM (benchmarks/weka_comparison.py).
 *
 * <p>Each line read from stdin is a classifier's class name and its command-line options,
 * separated by tabs. For each line this prints what {@code java <class> <options>} prints: the
 * class's {@code main} is {@code runClassifier}, which prints
 * {@code Evaluation.evaluateModel(new <class>(), options)}, called here the same way on a new
 * instance. The answer ends with the line {@link #END}, or is one line {@link #ERROR} and the
 * message when Weka throws. Starting a JVM per run costs more than the run on
 * small data sets; the classifiers keep no state between instances, so the answers are the
 * command line's.
 *
 * <p>Run with the source-file launcher: {@code java -cp weka.jar WekaEvaluate.java}.
 */
public class WekaEvaluate {
    static final String END = "WekaEvaluate: end";
    static final String ERROR = "WekaEvaluate: error ";

    public static void main(String[] args) throws Exception {
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String[] words = line.split("\t", -1);
            // Weka's warnings ("filling in missing values") go to stderr: kept per run, so that a
            // failure can report them and nothing piles up in a pipe nobody reads
            ByteArrayOutputStream warnings = new ByteArrayOutputStream();
            PrintStream stderr = System.err;
            System.setErr(new PrintStream(warnings, true, StandardCharsets.UTF_8));
            try {
                Classifier classifier = (Classifier) Class.forName(words[0])
                        .getDeclaredConstructor().newInstance();
                out.println(Evaluation.evaluateModel(
                        classifier, Arrays.copyOfRange(words, 1, words.length)));
                out.println(END);
            } catch (Throwable e) {  // OutOfMemoryError too: the next run may still fit
                // what the command line prints: the exception's message, without the usage
                // text that follows a bad option
                String message = e.getMessage() != null ? e.getMessage() : e.toString();
                int usage = message.indexOf("General options:");
                message = (usage < 0 ? message : message.substring(0, usage)) + " "
                        + warnings.toString(StandardCharsets.UTF_8);
                out.println(ERROR + message.strip().replaceAll("\\s+", " "));
            } finally {
                System.setErr(stderr);
            }
            out.flush();
        }
    }
}
